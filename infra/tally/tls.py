"""The local stack's certificates: a CA of its own and a key store per server, signed by it for
the addresses the server listens on, made with the JDK's keytool (nothing to download).

$TALLY_HOME/tls/ holds the CA's key store (ca.p12, mode 600) and its certificate (ca.pem, the
trust store every client needs); a server's key store is written into its own config directory,
which the service user owns. Key store passwords are made on first use under
$TALLY_HOME/secrets/ (mode 600). Made once: a later `up` reuses them, so clients that trust
ca.pem keep trusting the servers.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from .settings import Settings

KEYTOOL = shutil.which("keytool") or str(Path(shutil.which("java") or "java").resolve().parent / "keytool")
VALID_DAYS = 825  # what browsers accept for a server certificate; the CA lives longer
CA_DAYS = 3650


class LocalCa:
    def __init__(self, settings: Settings):
        self.s = settings
        self.cert = settings.local_ca_pem()
        self.dir = self.cert.parent
        self.store = self.dir / "ca.p12"

    def password(self) -> str:
        return self.s.generated_secret(self.s.home / "secrets" / "tls-ca-password")

    def ensure(self) -> Path:
        """Makes the CA once; returns its certificate (PEM), the clients' trust store."""
        if self.store.exists() and self.cert.exists():
            return self.cert
        self.dir.mkdir(parents=True, exist_ok=True)
        self.store.unlink(missing_ok=True)
        pw = self.password()
        keytool(
            "-genkeypair",
            "-alias",
            "ca",
            "-keyalg",
            "EC",
            "-groupname",
            "secp256r1",
            "-dname",
            "CN=Tally local CA",
            "-ext",
            "bc:c",
            "-validity",
            str(CA_DAYS),
            "-keystore",
            str(self.store),
            "-storetype",
            "PKCS12",
            password=pw,
        )
        os.chmod(self.store, 0o600)
        keytool(
            "-exportcert", "-rfc", "-alias", "ca", "-keystore", str(self.store), "-file", str(self.cert), password=pw
        )
        os.chmod(self.cert, 0o644)
        return self.cert

    def jvm_truststore(self) -> Path:
        """The CA's certificate as a PKCS12 trust store without a password (no integrity check, no
        encryption: it holds only a public certificate), for a JVM's default trust store
        (-Djavax.net.ssl.trustStore): no password for it on any command line. Made once."""
        path = self.dir / "ca-truststore.p12"
        if not path.exists():
            cert = self.ensure()
            keytool(
                "-importcert",
                "-noprompt",
                "-alias",
                "tally-ca",
                "-file",
                str(cert),
                "-keystore",
                str(path),
                "-storetype",
                "PKCS12",
                "-J-Dkeystore.pkcs12.certProtectionAlgorithm=NONE",
                "-J-Dkeystore.pkcs12.macAlgorithm=NONE",
                password="unused",  # keytool asks for one; with NONE above nothing is protected by it
            )
            os.chmod(path, 0o644)
        return path

    def component_keystore(self, component) -> tuple[Path, str]:
        """A node's key store in its config directory (`<name>.p12`, CN its kind, every node's
        address in it) and the store's password, made once in $TALLY_HOME/secrets/."""
        password = self.s.generated_secret(self.s.home / "secrets" / f"{component.name}-keystore-password")
        kind = component.metrics_job  # kafka, cassandra: the same for every node of a cluster
        return self.server_keystore(component.conf_dir / f"{kind}.p12", kind, self.s.node_hosts(), password), password

    def server_keystore(self, path: Path, name: str, hosts: list[str], password: str) -> Path:
        """A PKCS12 key store at `path` with the server's key and its certificate (CN=name, every
        host as a subject alternative name) signed by this CA, chain included. Made once."""
        if path.exists():
            return path
        self.ensure()
        path.parent.mkdir(parents=True, exist_ok=True)
        csr, crt = path.with_suffix(".csr"), path.with_suffix(".crt")
        san = ",".join([f"ip:{h}" if _is_ip(h) else f"dns:{h}" for h in hosts] + ["dns:localhost"])
        common = ["-keystore", str(path), "-storetype", "PKCS12"]
        keytool(
            "-genkeypair",
            "-alias",
            name,
            "-keyalg",
            "EC",
            "-groupname",
            "secp256r1",
            "-dname",
            f"CN={name}",
            "-validity",
            str(VALID_DAYS),
            *common,
            password=password,
        )
        keytool("-certreq", "-alias", name, *common, "-file", str(csr), password=password)
        keytool(
            "-gencert",
            "-alias",
            "ca",
            "-keystore",
            str(self.store),
            "-infile",
            str(csr),
            "-outfile",
            str(crt),
            "-rfc",
            "-ext",
            f"SAN={san}",
            "-ext",
            "EKU=serverAuth,clientAuth",
            "-validity",
            str(VALID_DAYS),
            password=self.password(),
        )
        keytool("-importcert", "-noprompt", "-alias", "ca", "-file", str(self.cert), *common, password=password)
        keytool("-importcert", "-alias", name, "-file", str(crt), *common, password=password)
        csr.unlink(missing_ok=True)
        crt.unlink(missing_ok=True)
        os.chmod(path, 0o600)
        return path


def keytool(*args: str, password: str) -> None:
    """Runs keytool with the store password from the environment (never on its command line)."""
    env = {**os.environ, "TALLY_KEYTOOL_PASS": password}
    r = subprocess.run(
        [KEYTOOL, *args, "-storepass:env", "TALLY_KEYTOOL_PASS"],
        capture_output=True,
        text=True,
        env=env,
    )
    if r.returncode != 0:
        raise RuntimeError(f"keytool {args[0]} failed: {r.stdout}{r.stderr}")


def _is_ip(host: str) -> bool:
    parts = host.split(".")
    return len(parts) == 4 and all(p.isdigit() for p in parts)
