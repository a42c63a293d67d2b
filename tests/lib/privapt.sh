# shellcheck shell=bash
# private_apt DIR SUITE [APT_CONF_LINES]: apt-get and apt-cache for Debian's
# amd64 SUITE with a sources list, state and cache of their own under
# DIR/apt (APT_CONFIG exported; A names that folder): the machine's apt
# configuration and package state are never read or changed.  Extra lines
# go into the configuration as they are.
private_apt() {
	A=$1/apt
	mkdir -p "$A/lists/partial" "$A/cache/archives/partial" "$A/etc/preferences.d" \
		"$A/etc/apt.conf.d" "$A/etc/trusted.gpg.d"
	: > "$A/status"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $2 main" > "$A/sources.list"
	cat > "$A/apt.conf" <<CONF
Dir::Etc::SourceList "$A/sources.list";
Dir::Etc::SourceParts "/nonexistent";
Dir::Etc::Preferences "$A/etc/preferences";
Dir::Etc::PreferencesParts "$A/etc/preferences.d";
Dir::Etc::Parts "$A/etc/apt.conf.d";
Dir::State "$A";
Dir::State::Lists "$A/lists";
Dir::State::status "$A/status";
Dir::Cache "$A/cache";
APT::Architecture "amd64";
APT::Get::List-Cleanup "0";
${3:-}
CONF
	export APT_CONFIG=$A/apt.conf
}
