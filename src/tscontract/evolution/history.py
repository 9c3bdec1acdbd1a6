"""A sequence of contract versions from files, directories or git revisions."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tscontract.contract.loader import load_contract, parse_contract
from tscontract.contract.model import SEMVER, Contract
from tscontract.errors import InputError

_CONTRACT_SUFFIXES = (".yaml", ".yml")


def _version_key(contract: Contract) -> tuple[int, int, int]:
    match = SEMVER.match(contract.version)
    assert match is not None
    return int(match[1]), int(match[2]), int(match[3])


def _from_git(spec: str) -> Contract:
    rev, path = spec.split(":", 1)
    try:
        text = subprocess.run(["git", "show", f"{rev}:{path}"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        detail = getattr(exc, "stderr", "") or str(exc)
        raise InputError(f"cannot read {spec} from git: {detail.strip().splitlines()[0] if detail else exc}") from None
    return parse_contract(text, spec)


def load_versions(specs: list[str]) -> list[Contract]:
    """Files and ``REV:PATH`` in the order given; a directory's contracts ordered by version."""
    contracts: list[Contract] = []
    for spec in specs:
        path = Path(spec)
        if path.is_dir():
            found = [load_contract(p) for p in sorted(path.iterdir()) if p.suffix in _CONTRACT_SUFFIXES]
            contracts.extend(sorted(found, key=_version_key))
        elif path.exists():
            contracts.append(load_contract(path))
        elif ":" in spec:
            contracts.append(_from_git(spec))
        else:
            raise InputError(f"not a contract file, directory or git REV:PATH: {spec}")
    if len(contracts) < 2:
        raise InputError("history needs at least two contract versions")
    return contracts
