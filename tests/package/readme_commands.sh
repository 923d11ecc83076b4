#!/bin/bash
# The README's first command, copied verbatim, on a fresh Debian 12 as root
# with no sudo (the usual container image): a minbase debootstrap of the
# suite this machine runs, from the mirror its apt uses, with a copy of the
# source tree; the command must install the build dependencies, build and
# print the --once exposition. Also checks that the README opens with exactly
# two commands and that their privilege prefix is empty for root and sudo for
# any other user, so the same text serves a user with sudo. The chroot lives
# in a mount namespace of its own (nothing is left mounted) and in the host's
# network namespace (apt needs the mirror; --once only reads). Root and the
# network; 2 to 5 minutes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$here/../lib/common.sh"

srcdir=${TCX_SRCDIR:-$here/../..}
readme=$srcdir/README.md
[ -f "$readme" ] || fail "$readme not found"

require_root
make_workdir
# The ```sh blocks before the first heading below the title.
awk '/^## / { exit } /^```sh$/ { grab = 1; n++; next } grab && /^```$/ { grab = 0; next }
	grab { print > (dir "/cmd" n) }' dir="$WORK" "$readme"
if [ ! -f "$WORK/cmd1" ] || [ ! -f "$WORK/cmd2" ] || [ -f "$WORK/cmd3" ]; then
	fail "the README must open with exactly two sh blocks (found: $(ls "$WORK"))"
fi
for n in 1 2; do
	[ "$(wc -l <"$WORK/cmd$n")" -eq 1 ] || fail "command $n is not one line: $(cat "$WORK/cmd$n")"
done
cmd1=$(cat "$WORK/cmd1")
grep -q 'tcexporter --once' "$WORK/cmd1" || fail "the first command does not run tcexporter --once: $cmd1"
grep -q 'tests/run-all' "$WORK/cmd2" || fail "the second command does not run tests/run-all"

# Neither command names sudo but through its prefix, which is empty for root
# and sudo for anyone else.
for n in 1 2; do
	prefix=$(cut -d';' -f1 "$WORK/cmd$n")
	case "$prefix" in S=*) ;; *) fail "command $n does not start with its prefix S=...: $(cat "$WORK/cmd$n")" ;; esac
	rest=$(cut -d';' -f2- "$WORK/cmd$n")
	if printf '%s\n' "$rest" | grep -Eq '(^|[^$])\bsudo\b'; then
		fail "command $n names sudo outside its prefix: $rest"
	fi
	got=$(bash -c "$prefix; printf '%s' \"\$S\"")
	[ -z "$got" ] || fail "command $n's prefix is '$got' for root, not empty"
	got=$(setpriv --reuid=65534 --regid=65534 --clear-groups bash -c "$prefix; printf '%s' \"\$S\"")
	[ "$got" = sudo ] || fail "command $n's prefix is '$got' for a user, not sudo"
done
note "the README opens with two commands; their prefix is empty for root, sudo for a user"

require_cmd debootstrap unshare chroot
arch=$(dpkg --print-architecture)
# shellcheck disable=SC1091
suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[ -n "$suite" ] || skip "no VERSION_CODENAME in /etc/os-release"
mirror=$(apt-cache policy | awk -v s="$suite/main" -v a="$arch" '$3 == s && $4 == a { print $2; exit }')
[ -n "$mirror" ] || skip "apt has no $suite/main source for $arch (run apt-get update)"

root=$WORK/root
note "debootstrap --variant=minbase $suite from apt's mirror"
debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$WORK/debootstrap.log" 2>&1 ||
	{ tail -20 "$WORK/debootstrap.log" >&2; fail "debootstrap failed"; }
[ ! -e "$root/usr/bin/sudo" ] || fail "the minbase image has sudo: the test would prove nothing"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
# No service starts inside the chroot.
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod +x "$root/usr/sbin/policy-rc.d"
mkdir "$root/src"
tar -C "$srcdir" --exclude=./build --exclude=./.git --exclude=./autom4te.cache -cf - . | tar -C "$root/src" -xf -

note "the first command, verbatim, as root without sudo"
# shellcheck disable=SC2016
unshare --mount --propagation private bash -c '
	set -e
	mount -t proc proc "$1/proc"
	mount --rbind /dev "$1/dev"
	mount --rbind /sys "$1/sys"
	exec chroot "$1" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root DEBIAN_FRONTEND=noninteractive /bin/bash -c "cd /src && $2"
' _ "$root" "$cmd1" >"$WORK/out" 2>"$WORK/err" || {
	tail -40 "$WORK/err" >&2
	fail "the README's first command failed as root in a fresh $suite without sudo"
}
grep -q '^# TYPE tc_exporter_snapshot_timestamp_seconds ' "$WORK/out" ||
	{ tail -40 "$WORK/out" "$WORK/err" >&2; fail "no --once exposition in the first command's output"; }
[ -x "$root/src/tcexporter" ] || fail "no tcexporter built in the chroot"
note "built and printed $(grep -c '^tc_' "$WORK/out") tc_ lines"
