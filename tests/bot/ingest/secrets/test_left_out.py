"""A fake key never removes a file; a real one is left out, and `status` says what was.

Issue 28: a file is skipped whole only when it is a private key (a block whose
body is base64 of a key's length, and little else); a real key inside ordinary
text costs only its block; a fake block (`this is not a key`, `...`) costs
nothing. What was left out is counted in the run log and shown by `status`.
"""

from __future__ import annotations

import base64
import hashlib
import sqlite3

from bot.config import FileConfig, Settings
from bot.core import CLI, Core
from bot.ingest.secrets import is_key_file, key_blocks, scrub

BODY = base64.b64encode(hashlib.sha512(b"left out").digest() * 3).decode()  # 256 characters
KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\n{}\n-----END OPENSSH PRIVATE KEY-----\n".format(
    "\n".join(BODY[i : i + 70] for i in range(0, len(BODY), 70))
)
FAKES = (
    "-----BEGIN PRIVATE KEY-----this is not a key-----END PRIVATE KEY-----",
    "-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----",
    "-----BEGIN PRIVATE KEY-----\n<paste your key here>\n-----END PRIVATE KEY-----",
    "-----BEGIN EC PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEF\n-----END EC PRIVATE KEY-----",
)
DEPLOY_DOC = (
    "# Deploying\n\nThe deploy key below is rotated monthly.\n\n```\n"
    + KEY
    + "```\n\nThen run make deploy.\n"
)


def test_a_real_key_block_is_real_and_a_fake_is_not():
    assert [b.real for b in key_blocks(KEY)] == [True]
    for fake in FAKES:
        assert [b.real for b in key_blocks(fake)] == [False], fake
        assert scrub(fake + "\n", "docs/keys.md").text == fake + "\n"


def test_a_key_file_is_a_key_and_little_else():
    assert is_key_file(KEY)
    assert is_key_file("# deploy@ci\n" + KEY)  # a comment line beside it is still a key file
    assert not is_key_file(DEPLOY_DOC)  # ordinary text around it: only the block goes
    assert not any(is_key_file(fake) for fake in FAKES)


def test_a_pgp_block_with_armor_headers_is_a_key():
    armored = (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\n"
        + "\n".join(BODY[i : i + 64] for i in range(0, len(BODY), 64))
        + "\n=AbCd\n-----END PGP PRIVATE KEY BLOCK-----\n"
    )
    assert [b.real for b in key_blocks(armored)] == [True]


def test_what_was_left_out_is_counted_and_shown_in_status(make_repo):
    repo = make_repo("svc")
    repo.write("deploy/id_ed25519.txt", KEY)  # a key and nothing else: skipped whole
    repo.write("docs/deploying.md", DEPLOY_DOC)  # indexed without the key block
    repo.write("docs/fake.md", "# Keys\n\n" + "\n\n".join(FAKES) + "\n\nAll of these are fake.\n")
    repo.write("app/settings.py", 'GITLAB_TOKEN = "glpat-Zq8Xv2LmT9kRw4NbYc7D"\nDEBUG = False\n')
    repo.commit("svc")
    core = Core.from_settings(Settings(), FileConfig())
    report = core.index_repo(str(repo.path), name="svc")
    assert report.skipped.get("secret_file") == 1
    assert report.secrets_redacted.get("private_key") == 1
    index = core.settings.home / "index.sqlite"
    texts = dict(
        sqlite3.connect(index).execute(
            "SELECT path, group_concat(text, '') FROM chunks GROUP BY path"
        )
    )
    assert "deploy/id_ed25519.txt" not in texts
    deploying = texts["docs/deploying.md"]
    assert "rotated monthly" in deploying and "make deploy" in deploying
    assert BODY[:40] not in deploying and "-----BEGIN OPENSSH PRIVATE KEY-----" in deploying
    assert all(fake.split("\n")[1] in texts["docs/fake.md"] for fake in FAKES[1:])
    assert "glpat-" not in texts["app/settings.py"]
    status = core.run_command("status", CLI).text
    assert (
        "left out: 1 file holding a secret, 1 private key block and 1 other secret redacted"
        in status
    ), status
    core.close()
