# Helpers of the VM tests (tests/vm/run.sh, tests/vm/bench.sh): build an
# initramfs from this machine's own files and boot Debian's kernel on it
# under QEMU (TCG: KVM is not available everywhere), with a 9p share for the
# results and the serial console for progress markers.
#
# Source it after tests/lib/common.sh from a script that runs under
# `set -euo pipefail`:
#
#   vm_find_kernel [SERIES]         sets VM_KERNEL, VM_KVER, VM_MODDIR (or skips)
#   vm_init_root DIR                a busybox root with /init in DIR
#   vm_add_bin DIR FILE [DEST]      a binary and the shared libraries it needs
#   vm_add_file DIR FILE DEST       a plain file
#   vm_add_modules DIR MOD...       modules and their dependencies, loaded by /init
#   vm_add_ovs DIR                  Open vSwitch's daemons, tools and schema (or skips)
#   vm_pack DIR OUT                 DIR as a newc cpio archive
#   vm_boot INITRD SHARE LOG TIMEOUT MEM
#                                   boots; /init runs /tcx/payload with the
#                                   share mounted on /out, its status in LOG
#
# The payload prints markers on the console: "TCXVM-BEGIN" when it starts
# and "TCXVM-END rc=N" when it is done; vm_boot fails unless both appear and
# sets VM_RC to N. Markers are matched anywhere on a line: the console starts
# with terminal escape codes.
# shellcheck shell=bash

# Modules /init always loads: virtio PCI and 9p for the result share.
VM_BASE_MODULES=(virtio_pci 9pnet_virtio 9p)

# vm_find_kernel [SERIES]: the newest /boot/vmlinuz-* (as from
# linux-image-amd64) that has its modules in /lib/modules; with SERIES (6.1,
# 6.12, ...), the newest of that series (vmlinuz-SERIES.*); without SERIES,
# TCX_VM_KERNEL when set (a vmlinuz path whose version is the part after
# "vmlinuz-"). Skips when there is none.
vm_find_kernel() {
	local series=${1:-} k v cands=() hint
	if [ -z "$series" ] && [ -n "${TCX_VM_KERNEL:-}" ]; then
		cands=("$TCX_VM_KERNEL")
		hint="TCX_VM_KERNEL: a readable vmlinuz-VERSION with /lib/modules/VERSION/modules.dep"
	else
		hint="install $(vm_package "$series")"
		shopt -s nullglob
		cands=(/boot/vmlinuz-"${series:+$series.}"*)
		shopt -u nullglob
		[ "${#cands[@]}" -gt 0 ] || skip "no kernel image /boot/vmlinuz-${series:+$series.}* ($hint)"
		mapfile -t cands < <(printf '%s\n' "${cands[@]}" | sort -r -V)
	fi
	VM_KERNEL=
	for k in "${cands[@]}"; do
		v=${k##*/vmlinuz-}
		if [ -r "$k" ] && [ -f "/lib/modules/$v/modules.dep" ]; then
			VM_KERNEL=$k
			VM_KVER=$v
			VM_MODDIR=/lib/modules/$v
			break
		fi
	done
	[ -n "$VM_KERNEL" ] || skip "no readable kernel image with modules among: ${cands[*]} ($hint)"
	export VM_KERNEL VM_KVER VM_MODDIR
}

# vm_package [SERIES]: the Debian 12 package that installs the newest kernel
# of SERIES (packaging/test-deps.txt lists them).
vm_package() {
	case "${1:-}" in
	"" | 6.1) echo linux-image-amd64 ;;
	*) echo "linux-image-$1-amd64" ;;
	esac
}

# vm_require_tools: skip unless qemu, a static busybox and cpio are there.
vm_require_tools() {
	require_cmd qemu-system-x86_64 cpio modprobe ldd
	VM_BUSYBOX=${TCX_VM_BUSYBOX:-}
	if [ -z "$VM_BUSYBOX" ]; then
		local b
		for b in /bin/busybox /usr/bin/busybox; do
			if [ -x "$b" ] && ! ldd "$b" >/dev/null 2>&1; then
				VM_BUSYBOX=$b
				break
			fi
		done
	fi
	[ -n "$VM_BUSYBOX" ] || skip "no static busybox (install busybox-static)"
	[ -x /bin/bash ] || skip "no /bin/bash"
}

# vm_add_file ROOT FILE DEST: copies FILE (following links) to ROOT/DEST.
vm_add_file() {
	mkdir -p "$1/$(dirname "$3")"
	cp -L "$2" "$1/$3"
}

# vm_add_bin ROOT FILE [DEST]: the executable FILE at DEST (default: its own
# path) and every shared library ldd lists, at the path ldd gives.
vm_add_bin() {
	local root=$1 bin=$2 dest=${3:-$2} lib
	[ -x "$bin" ] || fail "$bin is not an executable"
	vm_add_file "$root" "$bin" "$dest"
	chmod 755 "$root/$dest"
	# "libx.so => /path (0x..)", "/lib64/ld-linux-x86-64.so.2 (0x..)"
	while read -r lib; do
		[ -e "$root/$lib" ] || vm_add_file "$root" "$lib" "$lib"
	done < <(ldd "$bin" 2>/dev/null | sed -n -e 's/^.*=> \(\/[^ ]*\) .*$/\1/p' \
		-e 's/^[[:space:]]*\(\/[^ ]*\) (0x.*$/\1/p')
}

# vm_add_modules ROOT MOD...: the modules and their dependencies, appended in
# load order to ROOT/modules.list (one "PATH [PARAMS]" a line) for /init.
# Compressed modules are stored decompressed (busybox insmod).
vm_add_modules() {
	local root=$1 m line path params out dest
	shift
	for m in "$@"; do
		out=$(modprobe -S "$VM_KVER" --show-depends "$m" 2>&1) ||
			skip "kernel $VM_KVER has no module $m: $out"
		while read -r line; do
			case "$line" in
			insmod\ *) ;;
			*) continue ;; # "builtin X"
			esac
			line=${line#insmod }
			path=${line%% *}
			params=${line#"$path"}
			case "$path" in
			*.ko.xz) dest=${path%.xz} ;;
			*.ko.zst) dest=${path%.zst} ;;
			*.ko.gz) dest=${path%.gz} ;;
			*) dest=$path ;;
			esac
			awk -v d="$dest" '$1 == d { f = 1 } END { exit !f }' "$root/modules.list" &&
				continue
			mkdir -p "$root/$(dirname "$dest")"
			case "$path" in
			*.ko.xz) xz -dc "$path" >"$root/$dest" ;;
			*.ko.zst) zstd -q -dc "$path" >"$root/$dest" ;;
			*.ko.gz) gzip -dc "$path" >"$root/$dest" ;;
			*) cp "$path" "$root/$dest" ;;
			esac
			echo "$dest${params% }" >>"$root/modules.list"
		done <<<"$out"
	done
}

# The Open vSwitch programs vm_add_ovs puts in the initramfs, at their own
# paths (openvswitch-switch, openvswitch-common).
VM_OVS_BINS=(/usr/sbin/ovsdb-server /usr/sbin/ovs-vswitchd /usr/bin/ovsdb-tool /usr/bin/ovs-vsctl
	/usr/bin/ovs-appctl)

# vm_add_ovs ROOT: Open vSwitch (VM_OVS_BINS and their libraries), the
# schema of its database (/usr/share/openvswitch/vswitch.ovsschema) and the
# directories it was built for: /var/run/openvswitch (/var/run a link to
# /run, as on Debian; `ip netns` keeps its namespaces in /var/run/netns),
# /etc/openvswitch (the database), /var/log/openvswitch. The VM creates
# the database. Skips when OVS is not installed (a failure with
# TCX_REQUIRE_ROOT=1).
vm_add_ovs() {
	local root=$1 b schema=/usr/share/openvswitch/vswitch.ovsschema
	for b in "${VM_OVS_BINS[@]}"; do
		[ -x "$b" ] || skip "$b is not installed (openvswitch-switch)"
		vm_add_bin "$root" "$b" "$b"
	done
	[ -f "$schema" ] || skip "$schema is not installed (openvswitch-common)"
	vm_add_file "$root" "$schema" "$schema"
	mkdir -p "$root/run/openvswitch" "$root/etc/openvswitch" "$root/var/log/openvswitch"
	[ -e "$root/var/run" ] || ln -s ../run "$root/var/run"
}

# vm_init_root ROOT: busybox with its applets, bash, and /init.
vm_init_root() {
	local root=$1 a
	mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,out,run,tcx,etc}
	cp "$VM_BUSYBOX" "$root/bin/busybox"
	for a in $("$VM_BUSYBOX" --list); do
		case "$a" in busybox | bash) continue ;; esac
		ln -sf busybox "$root/bin/$a"
	done
	vm_add_bin "$root" /bin/bash /bin/bash
	: >"$root/modules.list"
	vm_add_modules "$root" "${VM_BASE_MODULES[@]}"
	echo "root:x:0:0:root:/:/bin/sh" >"$root/etc/passwd"
	echo "root:x:0:" >"$root/etc/group"
	cat >"$root/init" <<'INIT'
#!/bin/busybox sh
# PID 1 of the test VM: mount, load modules, run /tcx/payload, power off.
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
export LD_LIBRARY_PATH=/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
echo "TCXVM-BOOTED $(uname -r)"
ok=1
while read -r mod params; do
	# shellcheck disable=SC2086
	insmod "$mod" $params || { echo "TCXVM-ERROR insmod $mod failed"; ok=0; }
done </modules.list
if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 tcxout /out; then
	echo "TCXVM-ERROR cannot mount the 9p share"
	ok=0
fi
ip link set lo up
rc=1
if [ "$ok" = 1 ]; then
	echo "TCXVM-BEGIN"
	/bin/bash /tcx/payload
	rc=$?
	sync
	umount /out || rc=1
fi
echo "TCXVM-END rc=$rc"
poweroff -f
INIT
	chmod 755 "$root/init"
}

# vm_pack ROOT OUT: an uncompressed newc archive (the fastest to unpack).
vm_pack() {
	(cd "$1" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet) >"$2"
}

# vm_boot INITRD SHARE LOG TIMEOUT MEM: boots, waits for the power-off (at
# most TIMEOUT seconds), checks the markers, sets VM_RC.
vm_boot() {
	local initrd=$1 share=$2 log=$3 tmo=$4 mem=$5 qrc=0
	VM_RC=
	timeout --kill-after=10 "$tmo" qemu-system-x86_64 -accel tcg -cpu max -m "$mem" -smp 1 \
		-nodefaults -no-reboot -display none -monitor none -serial "file:$log" \
		-kernel "$VM_KERNEL" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 oops=panic loglevel=4 rdinit=/init" \
		-fsdev "local,id=tcxout,path=$share,security_model=none" \
		-device "virtio-9p-pci,fsdev=tcxout,mount_tag=tcxout" \
		</dev/null || qrc=$?
	if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
		tail -n 30 "$log" >&2 || true
		fail "the VM did not power off within $tmo s (TCX_VM_TIMEOUT)"
	fi
	[ "$qrc" = 0 ] || { tail -n 30 "$log" >&2 || true; fail "qemu exited with status $qrc"; }
	if ! grep -q 'TCXVM-BOOTED' "$log"; then
		tail -n 30 "$log" >&2 || true
		fail "the VM did not boot (no TCXVM-BOOTED on its console, see above)"
	fi
	if grep -q 'TCXVM-ERROR' "$log"; then
		grep 'TCXVM-ERROR' "$log" >&2
		fail "the VM could not set itself up"
	fi
	grep -q 'TCXVM-BEGIN' "$log" || fail "the VM never started its payload"
	VM_RC=$(sed -n 's/.*TCXVM-END rc=\([0-9]*\).*/\1/p' "$log" | tail -n 1)
	if [ -z "$VM_RC" ]; then
		tail -n 30 "$log" >&2 || true
		fail "no TCXVM-END marker on the console: the payload crashed or hung"
	fi
}
