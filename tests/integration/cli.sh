#!/bin/bash
# Command line behaviour that needs no kernel access: --help, --version,
# usage errors (exit 2), --check-config on valid and invalid files, and the
# daemon in the one executable.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$here/../lib/common.sh"

require_bin
make_workdir
srcdir=${TCX_SRCDIR:-$here/../..}
example=$srcdir/config/tcexporter.yaml
[ -f "$example" ] || fail "example configuration $example not found (TCX_SRCDIR=${TCX_SRCDIR:-unset})"
try_help="Try 'tcexporter --help'"

note "--help"
for opt in --help -h; do
	run_tcx help $opt
	expect_rc help 0
	expect_grep help out '^Usage: tcexporter'
	expect_grep help out -e '--once' # documents the options
	# The example with every key is the one under examples/ (docdir), not
	# the configuration in sysconfdir, which is the minimal one.
	expect_grep help out -E '^  /.*/tcexporter/tcexporter\.yaml$'
	expect_grep help out -E '^  /.*/examples/tcexporter\.yaml$'
	expect_empty help err
done

note "--version"
for opt in --version -V; do
	run_tcx version $opt
	expect_rc version 0
	expect_grep version out -E '^tcexporter [0-9]+\.[0-9]+\.[0-9]+([-~+.][0-9A-Za-z.~+-]*)? \(revision ([0-9a-f]{12}|unknown), libmnl [^ ,]+, libmicrohttpd [^ ,]+, net-snmp [^ ,]+, gzip (isa-l|zlib)/[^ ,]+\)$'
	[ "$(wc -l <"$WORK/version.out")" = 1 ] || fail "--version prints more than one line"
	expect_empty version err
done
# When the build's build.h is at hand, the version is the package's.
if [ -n "${TCX_BUILDDIR:-}" ] && [ -f "$TCX_BUILDDIR/build.h" ]; then
	want=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$TCX_BUILDDIR/build.h")
	if [ -n "$want" ]; then
		case "$(cat "$WORK/version.out")" in
		"tcexporter $want ("*) ;;
		*) fail "--version says '$(cat "$WORK/version.out")', build.h says $want" ;;
		esac
	fi
fi
# The revision is the git commit of the sources, "unknown" outside a
# checkout (make distcheck's tarball); the libraries' versions are those
# installed (libmnl: the one built against).
rev=unknown
if [ -n "${TCX_SRCDIR:-}" ] && [ -e "$TCX_SRCDIR/.git" ] && command -v git >/dev/null; then
	rev=$(git -C "$TCX_SRCDIR" rev-parse --short=12 HEAD)
fi
grep -qF "(revision $rev, " "$WORK/version.out" ||
	fail "--version: '$(cat "$WORK/version.out")', expected revision $rev"
if command -v pkg-config >/dev/null; then
	for lib in libmnl libmicrohttpd; do
		v=$(pkg-config --modversion "$lib" 2>/dev/null) || continue
		grep -qF " $lib $v" "$WORK/version.out" ||
			fail "--version: '$(cat "$WORK/version.out")', pkg-config has $lib $v"
	done
fi
# The gzip codec: the one configure chose, at the version pkg-config has.
if [ -n "${TCX_BUILDDIR:-}" ] && [ -f "$TCX_BUILDDIR/build.h" ] && command -v pkg-config >/dev/null; then
	if grep -q '^#define HAVE_ISAL 1' "$TCX_BUILDDIR/build.h"; then
		codec=isa-l/$(pkg-config --modversion libisal)
	else
		codec=zlib/$(pkg-config --modversion zlib)
	fi
	grep -qF ", gzip $codec)" "$WORK/version.out" ||
		fail "--version: '$(cat "$WORK/version.out")', expected gzip $codec (build.h, pkg-config)"
fi
if [ -n "${TCX_BUILDDIR:-}" ] && grep -q '^#define HAVE_SNMP 1' "$TCX_BUILDDIR/build.h" &&
	command -v net-snmp-config >/dev/null; then
	grep -qF "net-snmp $(net-snmp-config --version), " "$WORK/version.out" ||
		fail "--version: '$(cat "$WORK/version.out")', net-snmp-config has $(net-snmp-config --version)"
fi

note "usage errors exit 2 with a hint"
usage_error() { # NAME ARGS...: exit 2, the hint on stderr, nothing on stdout
	local name=$1
	shift
	run_tcx "$name" "$@"
	expect_rc "$name" 2
	expect_grep "$name" err -F "$try_help"
	expect_empty "$name" out
}
usage_error unknown_long --no-such-option
usage_error unknown_short -Z
usage_error unknown_with_once --once --bogus
usage_error format_without_once --format json
usage_error format_bogus --once --format bogus
expect_grep format_bogus err -F "bogus"
usage_error format_missing_arg --once --format
usage_error config_missing_arg --once --config
usage_error stray_arg --once extra
# A usage error stops before any collection, so none of these needs root.

note "--check-config on the example configuration"
run_tcx check_example --check-config "$example"
expect_rc check_example 0
expect_grep check_example out -F "valid"
expect_empty check_example err

note "--check-config on a valid temporary file"
cat >"$WORK/good.yaml" <<'YAML'
interval: 500ms
targets:
  - all: true
  - {dev: eth0, parent: ingress}
  - {dev: eth0, parent: egress, netns: blue}
  - {dev: eth1, parent: "1:"}
  - {block: 22}
labels: [tenant, rule]
unmapped: drop
cookies:
  "0011223344556677": {tenant: acme, rule: web}
  "0x22": [acme, db]
YAML
run_tcx check_good --check-config "$WORK/good.yaml"
expect_rc check_good 0
expect_empty check_good err

note "--check-config on invalid files: exit 2, FILE:LINE:COL: messages"
# bad_config NAME LINE: the YAML on stdin must be rejected with a message at
# FILE:LINE:<column>: (LINE is an extended regular expression), both by --check-config and by --once --config.
bad_config() {
	local name=$1 line=$2 f="$WORK/$1.yaml"
	cat >"$f"
	run_tcx "$name" --check-config "$f"
	expect_rc "$name" 2
	expect_grep "$name" err -E "^(tcexporter: )?(error: )?$f:$line:[0-9]+: "
	expect_empty "$name" out
	run_tcx "${name}_once" --once --config "$f"
	expect_rc "${name}_once" 2
	expect_grep "${name}_once" err -E "$f:$line:[0-9]+: "
	expect_empty "${name}_once" out
}
bad_config bad_key 3 <<'YAML'
targets:
  - dev: eth0
    bogus: 1
YAML
bad_config bad_parent 4 <<'YAML'
# a comment first
targets:
  - dev: eth0
    parent: sideways
YAML
bad_config bad_unmapped 2 <<'YAML'
labels: [tenant]
unmapped: maybe
YAML
bad_config bad_cookie 4 <<'YAML'
labels: [tenant]
cookies:
  "00112233": {tenant: a}
  "xyz": {tenant: b}
YAML
# libyaml places a syntax error where it noticed it (here at the end): any line.
bad_config bad_yaml '[0-9]+' <<'YAML'
targets:
  - dev: [eth0
YAML

# Every problem of a file is reported, each with its position.
cat >"$WORK/two_errors.yaml" <<'YAML'
targets:
  - dev: eth0
    bogus: 1
unmapped: maybe
YAML
run_tcx two_errors --check-config "$WORK/two_errors.yaml"
expect_rc two_errors 2
expect_grep two_errors err -E "$WORK/two_errors.yaml:3:[0-9]+: "
expect_grep two_errors err -E "$WORK/two_errors.yaml:4:[0-9]+: "

note "a configuration file that does not exist"
run_tcx check_missing --check-config "$WORK/does-not-exist.yaml"
expect_rc check_missing 2
expect_grep check_missing err -F "does-not-exist.yaml"
run_tcx once_missing --once --config "$WORK/does-not-exist.yaml"
expect_rc once_missing 2
expect_grep once_missing err -F "does-not-exist.yaml"
expect_empty once_missing out

note "files that are not regular, too large or too deep: exit 2 at once, the file named"
# quick_refusal NAME WHAT ARGS...: exit 2 in under a second, WHAT on stderr
# (killed after 3 s: these once read /dev/zero until memory ran out)
quick_refusal() {
	local name=$1 what=$2 t0 ms
	shift 2
	t0=$(date +%s%N)
	TCX_WRAP=(timeout 3)
	run_tcx "$name" "$@"
	TCX_WRAP=()
	ms=$((($(date +%s%N) - t0) / 1000000))
	expect_rc "$name" 2
	expect_grep "$name" err -F -e "$what"
	expect_empty "$name" out
	[ "$ms" -lt 1000 ] || fail "$name: tcexporter $* took $ms ms to refuse it"
}
mkdir "$WORK/a_dir"
quick_refusal check_dev_zero "/dev/zero: cannot open: not a regular file" --check-config /dev/zero
quick_refusal once_dev_zero "/dev/zero: cannot open: not a regular file" --once --config /dev/zero
quick_refusal check_dir "$WORK/a_dir: cannot open: not a regular file" --check-config "$WORK/a_dir"
truncate -s $((128 * 1024 * 1024 + 1)) "$WORK/huge.yaml" # sparse
quick_refusal check_huge "$WORK/huge.yaml: cannot open: larger than 128 MiB" \
	--check-config "$WORK/huge.yaml"
rm -f "$WORK/huge.yaml"
# 100k nested flow sequences (200 KB): libyaml's scanner took 15 s over it
{
	printf 'targets: '
	head -c 100000 /dev/zero | tr '\0' '['
	head -c 100000 /dev/zero | tr '\0' ']'
	echo
} >"$WORK/deep.yaml"
quick_refusal check_deep "$WORK/deep.yaml:1:73: nested deeper than 64 levels" \
	--check-config "$WORK/deep.yaml"

note "--check-config refuses what the daemon refuses of the web_config"
bad_web() { # NAME WEB_CONFIG WHAT: a config naming WEB_CONFIG fails with WHAT
	printf 'http:\n  web_config: %s\n' "$2" >"$WORK/$1.yaml"
	run_tcx "$1" --check-config "$WORK/$1.yaml"
	expect_rc "$1" 2
	expect_grep "$1" err -F -e "$3"
	expect_grep "$1" err -F -e "$WORK/$1.yaml: 1 problem found"
	expect_empty "$1" out
}
bad_web web_missing missing.yml "$WORK/missing.yml: cannot open: No such file or directory"
bad_web web_dir a_dir "$WORK/a_dir: cannot open: not a regular file"
printf 'basic_auth_users:\n  alice: secret\n' >"$WORK/plain.yml"
bad_web web_plain plain.yml "$WORK/plain.yml:2:10: user 'alice': password must be a bcrypt hash"
# exporter-toolkit's own dummy hash, at cost 31 (days per check) and 14
hash='QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi'
printf 'basic_auth_users:\n  alice: $2y$31$%s\n' "$hash" >"$WORK/dear.yml"
bad_web web_dear dear.yml \
	"$WORK/dear.yml:2:10: user 'alice': bcrypt cost 31 is above the limit of 14"
printf 'basic_auth_users:\n  alice: $2y$14$%s\n' "$hash" >"$WORK/web.yml"
printf 'http:\n  web_config: web.yml\n' >"$WORK/web_ok.yaml"
run_tcx web_ok --check-config "$WORK/web_ok.yaml"
expect_rc web_ok 0
expect_grep web_ok out -F "and its web_config"

note "the one executable links every library the daemon needs"
require_cmd readelf
exe_needed=$(readelf -d "$TCX_BIN" | sed -n 's/^.*(NEEDED).*\[\(.*\)\]$/\1/p')
want_libs="libmnl libyaml libmicrohttpd libgnutls libcrypt"
# the gzip codec configure chose (build.h), and not the other
if [ -n "${TCX_BUILDDIR:-}" ] && [ -f "$TCX_BUILDDIR/build.h" ]; then
	gz_lib=libz no_lib=libisal
	if grep -q '^#define HAVE_ISAL 1' "$TCX_BUILDDIR/build.h"; then
		gz_lib=libisal no_lib=libz
	fi
	want_libs="$want_libs $gz_lib"
	if grep -q "^$no_lib[-.]" <<<"$exe_needed"; then
		fail "$TCX_BIN needs $no_lib, which is not its gzip codec ($gz_lib)"
	fi
fi
if [ -n "${TCX_BUILDDIR:-}" ] && grep -q '^#define HAVE_SNMP 1' "$TCX_BUILDDIR/build.h"; then
	want_libs="$want_libs libnetsnmpagent"
fi
for lib in $want_libs; do
	grep -q "^$lib[-.]" <<<"$exe_needed" ||
		fail "$TCX_BIN does not need $lib: $(tr '\n' ' ' <<<"$exe_needed")"
done

note "the daemon runs from the executable alone"
# A copy of the executable alone in a directory, with nothing installed
# beside it. A configuration that does not exist: exit 2 from the daemon's
# configuration loader, so none of these starts a server.
mkdir "$WORK/bin"
cp "$TCX_BIN" "$WORK/bin/tcexporter"
nocfg=$WORK/does-not-exist.yaml
TCX_BIN=$WORK/bin/tcexporter run_tcx daemon_alone --config "$nocfg"
expect_rc daemon_alone 2
expect_grep daemon_alone err -F "$nocfg: cannot open: No such file or directory"
expect_empty daemon_alone out
# --syslog: the daemon logs to syslog, nothing on stderr.
TCX_BIN=$WORK/bin/tcexporter run_tcx daemon_syslog --syslog --config "$nocfg"
expect_rc daemon_syslog 2
expect_empty daemon_syslog err

echo "cli: all checks passed"
