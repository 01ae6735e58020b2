"""Installs a test's pinned npm packages (package.json and package-lock.json in the repository)
into the build tree with `npm ci`, unless exactly those are installed already: a second run needs
no network."""
import json
import os
import shutil
import subprocess


def npm_ci(package_dir, install_dir):
    """Installs package_dir's locked dependencies into install_dir/node_modules (returned)."""
    os.makedirs(install_dir, exist_ok=True)
    with open(os.path.join(package_dir, "package.json")) as f:
        wanted = json.load(f)["dependencies"]
    with open(os.path.join(package_dir, "package-lock.json")) as f:
        lock = f.read()
    node_modules = os.path.join(install_dir, "node_modules")
    copied_lock = os.path.join(install_dir, "package-lock.json")

    def installed(name, version):
        path = os.path.join(node_modules, name, "package.json")
        if not os.path.exists(path):
            return False
        with open(path) as f:
            return json.load(f)["version"] == version

    def read(path):
        with open(path) as f:
            return f.read()

    if (os.path.exists(copied_lock) and read(copied_lock) == lock
            and all(installed(name, version) for name, version in wanted.items())):
        return node_modules
    for name in ("package.json", "package-lock.json"):
        shutil.copy(os.path.join(package_dir, name), install_dir)
    subprocess.run(["npm", "ci", "--prefix", install_dir, "--no-audit", "--no-fund"], check=True)
    return node_modules


def run_node_checks(package_dir, install_dir, script, *args):
    """Runs `node package_dir/script ARGS...` with package_dir's pinned packages (npm_ci) on its
    module path; returns (exit code, its output, stderr merged)."""
    node_modules = npm_ci(package_dir, install_dir)
    node = subprocess.run(["node", os.path.join(package_dir, script), *args],
                          env={**os.environ, "NODE_PATH": node_modules},
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    return node.returncode, node.stdout
