"""``branchmem keys``: create, list, revoke and delete the API keys of a served store,
a thin shell over `branchmem.server.auth.KeyStore` (it needs no extra)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput, StorageError

if TYPE_CHECKING:
    from ..server.auth import KeyStore


def register(sub: Any) -> None:
    keys = sub.add_parser("keys", help="create, list, revoke or delete API keys of a served store")
    ksub = keys.add_subparsers(dest="keys_command", metavar="ACTION", required=True)
    create = ksub.add_parser("create", help="make a key; it is printed once, on the last line")
    create.add_argument("--db", required=True)
    keys_option(create)
    create.add_argument("--principal", required=True, help="who the key acts as (audit actor)")
    create.add_argument(
        "--grant",
        action="append",
        default=[],
        metavar="NS:ROLE[:branch=PATTERN]",
        help="repeatable: alice:write, shared:read, team:write:branch=task/*, user/*:read, "
        "*:admin; names match literally, '*' is the only wildcard, and \\ escapes "
        "* ? [ ] : \\ in a name",
    )
    create.set_defaults(func=cmd_keys_create)
    lst = ksub.add_parser("list", help="the keys (never their secrets)")
    lst.add_argument("--db", required=True)
    keys_option(lst)
    lst.set_defaults(func=cmd_keys_list)
    revoke = ksub.add_parser("revoke", help="revoke a key by its id")
    revoke.add_argument("--db", required=True)
    keys_option(revoke)
    revoke.add_argument("key_id", help="the id shown by `keys list` (the part after bm_)")
    revoke.set_defaults(func=cmd_keys_revoke)
    delete = ksub.add_parser("delete", help="delete every key of a principal from the keys file")
    delete.add_argument("--db", required=True)
    keys_option(delete)
    delete.add_argument("--principal", required=True, help="whose keys to delete")
    delete.set_defaults(func=cmd_keys_delete)


def keys_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--keys",
        default=None,
        metavar="FILE",
        help="the keys file (default: DB.keys next to an SQLite store; needed with a URL)",
    )


def open_keys(args: argparse.Namespace) -> KeyStore:
    """The keys file ``--keys`` names, or the one next to the ``--db`` SQLite file."""
    from ..server.auth import KeyStore, keys_path

    path = args.keys
    if path is None:
        if "://" in args.db:  # a server database: no file of its own to sit next to
            raise InvalidInput(
                "--db is a database URL, so there is no store file to keep the keys next to; "
                "name a local keys file with --keys FILE (made with mode 0600)"
            )
        path = keys_path(args.db)
    try:
        return KeyStore(path)
    except OSError as exc:
        raise StorageError(f"cannot open the keys file {path!r}: {exc.strerror or exc}") from None


def cmd_keys_create(args: argparse.Namespace) -> int:
    from ..server.auth import check_new_key

    check_new_key(args.principal, args.grant)  # before the keys file is made
    info, key = open_keys(args).create(args.principal, args.grant)
    print(f"key {info.id} for {info.principal}: {', '.join(map(str, info.grants))}")
    for g in info.grants:
        print(f"  {g}: {g.describe()}")
    print("store it now; it is not shown again:")
    print(key)
    return 0


def cmd_keys_list(args: argparse.Namespace) -> int:
    for k in open_keys(args).list():
        state = "revoked" if k.revoked_at is not None else "active"
        print(f"{k.id}\t{k.principal}\t{state}\t{' '.join(map(str, k.grants))}")
    return 0


def cmd_keys_revoke(args: argparse.Namespace) -> int:
    info = open_keys(args).revoke(args.key_id)
    print(f"revoked {info.id} ({info.principal})")
    return 0


def cmd_keys_delete(args: argparse.Namespace) -> int:
    gone = open_keys(args).delete(args.principal)
    print(f"deleted {len(gone)} key(s) of {args.principal}: {', '.join(k.id for k in gone)}")
    return 0
