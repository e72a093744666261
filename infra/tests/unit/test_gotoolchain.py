"""The Go toolchain install: versions, go.sum's h1 hash, and an install from a proxy on loopback."""

import http.server
import io
import threading
import zipfile

import pytest
from tally import gotoolchain


def test_the_go_mod_names_a_version():
    assert gotoolchain.parse_version(gotoolchain.required()) >= (1, 22, 0)


def test_versions_compare_as_numbers():
    assert gotoolchain.parse_version("go1.26.8") == (1, 26, 8)
    assert gotoolchain.parse_version("1.9") == (1, 9, 0)
    assert gotoolchain.parse_version("go1.19.8") < gotoolchain.parse_version("1.26.8")
    assert gotoolchain.parse_version("go1.100.0") > gotoolchain.parse_version("1.26.8")


def module_zip(mod: str) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, body, mode in (("bin/go", b"#!/bin/sh\necho go\n", 0o755), ("VERSION", b"go9.9.9\n", 0o644)):
            info = zipfile.ZipInfo(f"golang.org/toolchain@{mod}/{name}")
            info.external_attr = mode << 16
            z.writestr(info, body)
    return buf.getvalue()


def test_h1_is_go_sums_hash_of_the_sorted_files():
    # two files, hashed as dirhash.Hash1 does: sha256 of "sha256hex  name\n" lines in name order
    import base64
    import hashlib

    data = module_zip("v0.0.1-go9.9.9.linux-amd64")
    z = zipfile.ZipFile(io.BytesIO(data))
    names = sorted(z.namelist())
    lines = "".join(f"{hashlib.sha256(z.read(n)).hexdigest()}  {n}\n" for n in names)
    assert gotoolchain.h1(data) == "h1:" + base64.b64encode(hashlib.sha256(lines.encode()).digest()).decode()


@pytest.fixture
def proxy(monkeypatch, tmp_path):
    mod = gotoolchain.module_version("9.9.9")
    data = module_zip(mod)
    asked = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            asked.append(self.path)
            if self.path == f"/golang.org/toolchain/@v/{mod}.zip":
                self.send_response(200)
                self.end_headers()
                self.wfile.write(data)
            else:
                self.send_error(404)

        def log_message(self, *a):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("GOPROXY", f"http://127.0.0.1:{server.server_port},direct")
    monkeypatch.setattr(gotoolchain, "TOOLCHAINS", tmp_path)
    yield mod, data, asked
    server.shutdown()


def test_install_unpacks_the_module_once_with_its_modes(proxy):
    mod, data, asked = proxy
    gotoolchain.PINNED_H1[mod] = gotoolchain.h1(data)
    try:
        go = gotoolchain.install("9.9.9", log=lambda *_: None)
        assert go.read_bytes().startswith(b"#!/bin/sh")
        assert go.stat().st_mode & 0o111
        assert (go.parent.parent / "VERSION").read_text() == "go9.9.9\n"
        assert gotoolchain.install("9.9.9", log=lambda *_: None) == go
        assert len(asked) == 1, "a second install fetches nothing"
    finally:
        del gotoolchain.PINNED_H1[mod]


def test_a_download_whose_hash_differs_installs_nothing(proxy, tmp_path):
    mod, _, _ = proxy
    gotoolchain.PINNED_H1[mod] = "h1:AAAA"
    try:
        with pytest.raises(RuntimeError, match="expected h1:AAAA"):
            gotoolchain.install("9.9.9", log=lambda *_: None)
        assert not any(tmp_path.iterdir())
    finally:
        del gotoolchain.PINNED_H1[mod]


def test_a_version_without_a_pinned_hash_is_refused(proxy, tmp_path):
    with pytest.raises(RuntimeError, match="no pinned hash"):
        gotoolchain.install("9.9.9", log=lambda *_: None)
    assert not any(tmp_path.iterdir())
