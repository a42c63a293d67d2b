#!/bin/sh
# arm64-apt.sh DIR CMD...: apt-get for Debian's arm64 packages without adding
# the architecture to this machine's dpkg: its own configuration, lists,
# cache and status under DIR, this machine's sources and keyrings.
#   tools/arm64-apt.sh build/arm64/apt update
#   tools/arm64-apt.sh build/arm64/apt download libbpf-dev ...
set -eu
D=$1; shift
mkdir -p "$D/lists/partial" "$D/cache/archives/partial" "$D/etc/preferences.d" "$D/dpkg"
: > "$D/dpkg/status"
cat > "$D/apt.conf" <<CONF
APT::Architecture "arm64";
APT::Architectures { "arm64"; };
Dir::State "$(cd "$D" && pwd)";
Dir::State::Lists "$(cd "$D" && pwd)/lists";
Dir::State::status "$(cd "$D" && pwd)/dpkg/status";
Dir::Cache "$(cd "$D" && pwd)/cache";
Dir::Etc::Preferences "$(cd "$D" && pwd)/etc/preferences";
Dir::Etc::PreferencesParts "$(cd "$D" && pwd)/etc/preferences.d";
Debug::NoLocking "true";
CONF
export APT_CONFIG="$D/apt.conf"
exec apt-get -q "$@"
