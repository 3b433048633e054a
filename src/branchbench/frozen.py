"""The shipped splits are frozen: their manifests' own hashes are recorded here.

``verify_manifest`` proves that a folder's scenario files match its
``MANIFEST``, but whoever edits a scenario can also rewrite the manifest
(``write_manifest``) and the folder would look consistent again. Results
are only comparable across runs and releases if ``dev`` and ``test`` never
change silently, so the SHA-256 of each shipped ``MANIFEST`` file is kept in
the code as well: changing a split then means changing this file too, in
plain sight of review, and a run refuses to start until that is done.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from branchbench.scenario import ManifestError, sha256_file, split_dir, verify_manifest

FROZEN_MANIFESTS: Final[dict[str, str]] = {
    "dev": "67584899f486ee7e84deee819c3a723980461bbcb69727a6063dd57f4b9c39dc",
    "test": "e2b1894c4a737f501db3de75c5452dd766c9b73bbc1bbc8ff8dfc77f5959907b",
    "threads": "3c9f0891cfc719b5fb76b24b7ec7fe1a0fb86819f93a497ac0f93862e277c0f6",
    "graph": "cde96b114b3a84803bf44696b8e91ec1e3fbb8a67250a19b5934d016e7826841",
    "consolidation": "c069d51b13ce59b7b1dd02517fdc74443f1da4002cc9b5217eb95c5239aabc47",
}


def verify_split(split: str) -> Path:
    """Check a shipped split against its recorded manifest hash, then its files.

    Returns the split's folder. Raises `ManifestError` if the split is
    unknown, its ``MANIFEST`` differs from the recorded one, or any scenario
    file differs from the ``MANIFEST`` (changed, missing or added).

    >>> verify_split("dev").name
    'dev'
    """
    expected = FROZEN_MANIFESTS.get(split)
    if expected is None:
        raise ManifestError(
            f"split {split!r} has no recorded manifest hash; frozen splits: "
            f"{', '.join(sorted(FROZEN_MANIFESTS))}"
        )
    directory = split_dir(split)
    manifest = directory / "MANIFEST"
    if not manifest.is_file():
        raise ManifestError(f"split {split!r}: {manifest} is missing; the split cannot be verified")
    actual = sha256_file(manifest)
    if actual != expected:
        raise ManifestError(
            f"split {split!r}: the MANIFEST was changed (sha256 {actual}, recorded {expected}); "
            "restore the shipped files, or, for a deliberate new version of the split, record "
            "the new hash in branchbench/frozen.py"
        )
    try:
        verify_manifest(directory, hint=False)
    except ManifestError as exc:
        raise ManifestError(
            f"split {split!r}: {exc}; restore the shipped files (reinstall branchbench)"
        ) from exc
    return directory
