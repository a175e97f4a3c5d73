#!/usr/bin/env bash
# Packs the npm packages of the kit (issue 37) from a built binary: the platform package
# @checkpoint-conformance/linux-x64 (the binary, stripped of its debug info, in bin/) and
# checkpoint-conformance (the launcher, the vitest entry; the platform package is its
# optional dependency). Both are staged in a temporary directory: the checkout is not
# written. Prints the two tarballs' paths, the platform one first.
#
# Usage: packaging/npm/pack.sh BINARY OUTDIR
#   BINARY  a Linux x64 build of `cargo build -p checkpoint-conformance` (CI reuses
#           target/debug/checkpoint-conformance; a release uses --release)
#   OUTDIR  where the .tgz files go (created if missing)
# Another platform: see docs/npm-package.md (one platform package per os/cpu, the same
# manifest with its own "os"/"cpu", named in the main package's optionalDependencies).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
[ $# -eq 2 ] || { echo "usage: packaging/npm/pack.sh BINARY OUTDIR" >&2; exit 2; }
binary="$1"
mkdir -p "$2"
out="$(cd "$2" && pwd)"
[ -x "$binary" ] || { echo "error: $binary: no such executable (build it: cargo build -p checkpoint-conformance)" >&2; exit 2; }

# The packages' versions are the kit's (the workspace version in Cargo.toml).
kit_version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -1)"
node - "$here" "$kit_version" <<'EOF'
const [dir, version] = process.argv.slice(2);
const main = require(`${dir}/checkpoint-conformance/package.json`);
const platform = require(`${dir}/platforms/linux-x64/package.json`);
const problems = [];
if (main.version !== version) problems.push(`checkpoint-conformance is ${main.version}`);
if (platform.version !== version) problems.push(`${platform.name} is ${platform.version}`);
if (main.optionalDependencies[platform.name] !== version) problems.push(`the optional dependency on ${platform.name} is ${main.optionalDependencies[platform.name]}`);
if (problems.length) {
  console.error(`error: the npm packages must carry the kit's version ${version}: ${problems.join("; ")}`);
  process.exit(2);
}
EOF

stage="$(mktemp -d "${TMPDIR:-/tmp}/checkpoint-conformance-npm-stage.XXXXXX")"
trap 'rm -rf "$stage"' EXIT
cp -r "$here/platforms/linux-x64" "$stage/linux-x64"
mkdir -p "$stage/linux-x64/bin"
# The dev profile's binary carries ~140 MB of debug info: the package needs none of it.
strip --strip-debug -o "$stage/linux-x64/bin/checkpoint-conformance" "$binary" 2>/dev/null ||
  cp "$binary" "$stage/linux-x64/bin/checkpoint-conformance"
chmod 755 "$stage/linux-x64/bin/checkpoint-conformance"
cp -r "$here/checkpoint-conformance" "$stage/main"
cp "$here/README.md" "$stage/main/README.md"
chmod 755 "$stage/main/bin/checkpoint-conformance.mjs"

for pkg in linux-x64 main; do
  (cd "$stage/$pkg" && npm pack --silent --pack-destination "$out") | tail -1 | sed "s|^|$out/|"
done
