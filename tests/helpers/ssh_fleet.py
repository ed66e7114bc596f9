"""A test fleet on this machine: each "host" an sshd on 127.0.0.1 with its own port, host
key and authorized_keys, inside `unshare --uts --mount --pid --fork` (its own hostname,
its own /etc/machine-id bind-mounted in, so its device identity differs; killing the
namespace's first process kills everything in it, sshd and any plan run it started).

The hosts share this machine's filesystem, so each gets its own `edgebench_root` and
model cache (`edgebench_env` EDGEBENCH_CACHE), and installs edgebench without the network:
its venv sees this venv's packages through `edgebench_venv_site_packages`, pip runs with
no index and no build isolation, and install.sh finds llama-cpp-python already built for
this CPU (the stamp of the installed one).
"""

from __future__ import annotations

import getpass
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass, field
from pathlib import Path

SSHD = "/usr/sbin/sshd"
_TOOLS = ("ssh", "ssh-keygen", "unshare")


def missing_tools() -> str | None:
    """Why the fleet cannot run here, or None."""
    if not Path(SSHD).is_file():
        return f"{SSHD} not found (apt-get install openssh-server)"
    for tool in _TOOLS:
        if not shutil.which(tool):
            return f"{tool} not found"
    beside = Path(sys.executable).parent / "ansible-playbook"
    if not beside.is_file() and not shutil.which("ansible-playbook"):
        return "ansible-playbook not found (pip install 'edgebench[fleet]')"
    if os.geteuid() != 0:
        return "the test hosts need root (mount and PID namespaces, sshd)"
    probe = subprocess.run(
        ["unshare", "--uts", "--mount", "--pid", "--fork", "true"], capture_output=True
    )
    if probe.returncode != 0:
        return f"unshare cannot make namespaces here: {probe.stderr.decode().strip()}"
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class SshHost:
    name: str
    folder: Path
    port: int
    client_key: Path
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def root(self) -> Path:
        """The host's edgebench_root."""
        return self.folder / "edgebench"

    @property
    def cache(self) -> Path:
        return self.folder / "cache"

    def start(self) -> None:
        """sshd in its namespace, listening when this returns."""
        config = self.folder / "sshd_config"
        log = (self.folder / "sshd.log").open("ab")
        script = (
            f"hostname {self.name} && mount --bind {self.folder / 'machine-id'} /etc/machine-id"
            f" && exec {SSHD} -D -e -f {config}"
        )
        self.process = subprocess.Popen(
            [
                "unshare",
                "--uts",
                "--mount",
                "--pid",
                "--fork",
                "--mount-proc",  # its /proc shows its own PIDs: the workers' memory reads
                "--kill-child=SIGKILL",
                "sh",
                "-c",
                script,
            ],
            stdout=log,
            stderr=log,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        log_text = (self.folder / "sshd.log").read_text()
        raise RuntimeError(f"{self.name}: sshd did not start: {log_text}")

    def kill(self) -> None:
        """The whole namespace, at once (SIGKILL to unshare: its child, PID 1 there, dies
        and takes every process of the namespace with it)."""
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()


@dataclass
class SshFleet:
    folder: Path
    hosts: list[SshHost]
    inventory: Path

    def stop(self) -> None:
        for host in self.hosts:
            host.kill()


def _keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)


def _sshd_config(host: SshHost, authorized: Path) -> str:
    return "\n".join(
        [
            f"Port {host.port}",
            "ListenAddress 127.0.0.1",
            f"HostKey {host.folder / 'host_key'}",
            f"AuthorizedKeysFile {authorized}",
            "PidFile none",
            "UsePAM no",
            "StrictModes no",
            "PermitRootLogin prohibit-password",
            "PasswordAuthentication no",
            "Subsystem sftp internal-sftp",
            # The host's temporary files (Ansible's module payloads too) in its folder.
            f"SetEnv TMPDIR={host.folder / 'tmp'}",
            "",
        ]
    )


def start_fleet(folder: Path, names: tuple[str, ...] = ("host-a", "host-b")) -> SshFleet:
    """Hosts `names` running, and the inventory that reaches them (folder/hosts.ini)."""
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation
    folder.mkdir(parents=True, exist_ok=True)
    client_key = folder / "client_key"
    _keygen(client_key)
    authorized = folder / "authorized_keys"
    shutil.copy(client_key.with_suffix(".pub"), authorized)
    hosts = []
    for name in names:
        host = SshHost(name, folder / name, free_port(), client_key)
        host.folder.mkdir()
        (host.folder / "tmp").mkdir()
        _keygen(host.folder / "host_key")
        (host.folder / "machine-id").write_text(secrets.token_hex(16) + "\n")
        (host.folder / "sshd_config").write_text(_sshd_config(host, authorized))
        host.start()
        hosts.append(host)
    inventory = folder / "hosts.ini"
    inventory.write_text(inventory_text(hosts))
    return SshFleet(folder, hosts, inventory)


def inventory_text(hosts: list[SshHost]) -> str:
    """The test's inventory: the hosts on loopback, host keys not checked (test only),
    each host's folder and cache, and the offline install from this venv."""
    site_packages = [sysconfig.get_paths()["purelib"]]
    base_python = getattr(sys, "_base_executable", sys.executable)
    lines = ["[fleet]"]
    for host in hosts:
        env = {
            "EDGEBENCH_CACHE": str(host.cache),
            "PIP_NO_INDEX": "1",
            "PIP_NO_BUILD_ISOLATION": "0",
        }
        lines.append(
            f"{host.name} ansible_host=127.0.0.1 ansible_port={host.port} "
            f"edgebench_root={host.root} edgebench_env='{json.dumps(env)}' "
            # Ansible's module files on the "host" stay in the test's folder.
            f"ansible_remote_tmp={host.folder / 'ansible-tmp'}"
        )
    lines += [
        "",
        "[fleet:vars]",
        f"ansible_user={getpass.getuser()}",
        f"ansible_ssh_private_key_file={hosts[0].client_key}",
        "ansible_ssh_common_args='-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null'",
        f"ansible_python_interpreter={base_python}",
        f"edgebench_python={base_python}",
        f"edgebench_venv_site_packages='{json.dumps(site_packages)}'",
        "",
    ]
    return "\n".join(lines)
