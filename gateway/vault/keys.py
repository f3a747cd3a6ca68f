"""The vault's keys: given by the operator, never generated beside the data they open.

`[vault] keys_env` (default `GATEWAY_VAULT_KEYS`) names an environment variable holding one or more
Fernet keys, comma-separated; `[vault] key_file` a file holding one a line (mode 0600). The first key
seals; every key opens, so a key is rotated by putting the new one first, running `gateway vault
rotate` (every grant sealed again with it), then dropping the old one. Each sealed grant records
which key sealed it (its id: the first 12 hex digits of the key's SHA-256), so a grant no key opens
is named with the key it needs, and nothing is ever decrypted wrong (Fernet authenticates what it
opens).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..errors import UserError

DEFAULT_KEYS_ENV = "GATEWAY_VAULT_KEYS"


class VaultKeyError(UserError):
    """The vault has no key, a key is malformed, or no key opens a grant."""


def new_key() -> str:
    """A new Fernet key (32 random bytes, URL-safe base64), for `gateway vault key`."""
    from cryptography.fernet import Fernet

    return Fernet.generate_key().decode()


def key_id(key: str) -> str:
    return hashlib.sha256(key.strip().encode()).hexdigest()[:12]


class VaultKeys:
    """The operator's keys, the first one sealing.

    Raises:
        VaultKeyError: no key, or a key that is not a Fernet key.
    """

    def __init__(self, keys: Sequence[str]) -> None:
        try:
            from cryptography.fernet import Fernet
        except ImportError:  # pragma: no cover - the vault's extra is missing
            raise VaultKeyError(
                "the vault needs the cryptography package: pip install 'metatool-gateway[oauth]'"
            ) from None
        cleaned = [k.strip() for k in keys if k.strip()]
        if not cleaned:
            raise VaultKeyError(
                f"the vault has no key: set {DEFAULT_KEYS_ENV} (gateway vault key prints a new one) or "
                "[vault] key_file; keep it away from the data directory, which it protects"
            )
        self._fernets: dict[str, Fernet] = {}
        for n, key in enumerate(cleaned, 1):
            try:
                self._fernets[key_id(key)] = Fernet(key.encode())
            except (ValueError, TypeError):
                raise VaultKeyError(
                    f"vault key {n} is not a Fernet key (32 bytes, URL-safe base64): make one with gateway vault key"
                ) from None
        self.current = key_id(cleaned[0])

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(self._fernets)

    def seal(self, data: bytes) -> tuple[str, bytes]:
        """`data` sealed with the current key, and that key's id."""
        return self.current, self._fernets[self.current].encrypt(data)

    def open(self, sealed_with: str, token: bytes, *, what: str) -> bytes:
        """What `token` holds, opened with the key it was sealed with.

        Raises:
            VaultKeyError: that key is not among these, or it does not open the token.
        """
        from cryptography.fernet import InvalidToken

        fernet = self._fernets.get(sealed_with)
        if fernet is None:
            raise VaultKeyError(
                f"{what} was sealed with vault key {sealed_with}, which is not among the vault's keys "
                f"({', '.join(self.ids)}): restore that key, or have its owner connect again"
            )
        try:
            return fernet.decrypt(token)
        except InvalidToken:
            raise VaultKeyError(
                f"{what} does not open with vault key {sealed_with}: it was changed, or is damaged"
            ) from None

    @staticmethod
    def from_settings(
        keys_env: str, key_file: Path | None, environ: Mapping[str, str] | None = None
    ) -> VaultKeys:
        """The keys of `[vault]`: the environment variable's, then the key file's lines."""
        environ = os.environ if environ is None else environ
        keys = [k for k in environ.get(keys_env, "").split(",") if k.strip()]
        if key_file is not None:
            try:
                if key_file.stat().st_mode & 0o077:
                    raise VaultKeyError(f"{key_file} is readable by other users: run chmod 600 {key_file}")
                keys += [line for line in key_file.read_text().splitlines() if line.strip()]
            except OSError as exc:
                raise VaultKeyError(
                    f"cannot read the vault's key file {key_file}: {exc.strerror or exc}"
                ) from None
        return VaultKeys(keys)
