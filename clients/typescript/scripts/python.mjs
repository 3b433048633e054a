// The Python that runs the server (its OpenAPI document, `branchmem serve` in the
// tests): $BRANCHMEM_PYTHON, else the repository's .venv. The repository's src/
// goes first on PYTHONPATH, so that the server is this tree's, whatever the venv.
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const PACKAGE = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const REPO = resolve(PACKAGE, "..", "..");

export function python() {
  const chosen = process.env.BRANCHMEM_PYTHON || join(REPO, ".venv", "bin", "python");
  if (!existsSync(chosen)) {
    throw new Error(
      `no Python at ${chosen}: create the repository's venv (python3 -m venv .venv && ` +
        `.venv/bin/pip install -e '.[dev]') or set BRANCHMEM_PYTHON to a Python with branchmem[server]`,
    );
  }
  return chosen;
}

export function pythonEnv() {
  const src = join(REPO, "src");
  const path = process.env.PYTHONPATH ? `${src}:${process.env.PYTHONPATH}` : src;
  return { ...process.env, PYTHONPATH: path, PYTHONUNBUFFERED: "1" };
}
