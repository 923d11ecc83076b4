#!/bin/bash
# The README's worked example, run as written: its shell block (less sudo,
# with the built binary for ./tcexporter) must print the output lines the
# README shows, and traffic through its filters must be counted once per
# packet: a mirror that feeds packets back into the filtered device would
# count one packet for ever.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$here/../lib/common.sh"

require_bin
require_root
find_python
make_workdir
readme=${TCX_SRCDIR:-$here/../..}/README.md
[ -f "$readme" ] || fail "$readme not found"

# The first ```sh block after the heading, and the first plain ``` block
# after "The output (abridged):".
awk '/^### Worked example/ { on = 1 } on && /^```sh$/ { grab = 1; next }
	grab && /^```$/ { exit } grab' "$readme" >"$WORK/example.sh"
awk '/^### Worked example/ { on = 1 } on && /The output \(abridged\):/ { want = 1 }
	want && /^```$/ { if (grab) exit; grab = 1; next } grab' "$readme" >"$WORK/expected"
grep -q 'tcexporter --once' "$WORK/example.sh" || fail "no worked example found in $readme"
grep -q '^tc_action_bytes_total{' "$WORK/expected" || fail "no example output found in $readme"

# ./tcexporter becomes a wrapper: it runs $HOOK (if any) in the example's
# namespace, then the built binary with the example's arguments.
cat >"$WORK/tcexporter" <<EOF
#!/bin/bash
set -e
[ -z "\${HOOK:-}" ] || \$HOOK
exec "$TCX_BIN" "\$@" \${EXTRA_ARGS:-}
EOF
chmod +x "$WORK/tcexporter"
sed -e 's/^sudo //' -e "s#\./tcexporter#$WORK/tcexporter#" "$WORK/example.sh" >"$WORK/run.sh"

note "the example as written prints the README's lines"
(cd "$WORK" && bash ./run.sh >"$WORK/plain.out" 2>"$WORK/plain.err") ||
	{ cat "$WORK/plain.err" >&2; fail "the worked example failed"; }
while IFS= read -r line; do
	grep -qxF "$line" "$WORK/plain.out" ||
		{ cat "$WORK/plain.out" >&2; fail "output lacks the README's line: $line"; }
done <"$WORK/expected"

# One packet for each filter, sent into demo0 from its peer; the counters
# are read a second later, long enough for a loop to count millions.
cat >"$WORK/send.py" <<'PY'
import socket, struct, sys

def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xffff)
    return ~(s + (s >> 16)) & 0xffff

s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("demo1", 0))
for dst, dport in (("198.51.100.1", 53), ("192.0.2.1", 9)):
    udp = struct.pack("!HHHH", 40000, dport, 8 + 4, 0) + b"test"
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0, 64, 17, 0,
                     socket.inet_aton("198.51.100.2"), socket.inet_aton(dst))
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    s.send(b"\xff" * 6 + b"\x02\x00\x00\x00\x00\x01\x08\x00" + ip + udp)
PY
cat >"$WORK/hook" <<EOF
#!/bin/bash
"$PYTHON" "$WORK/send.py" && sleep 1
EOF
chmod +x "$WORK/hook"

note "one packet through each filter counts once"
(cd "$WORK" && HOOK=$WORK/hook EXTRA_ARGS='--format json' bash ./run.sh >"$WORK/json.out" 2>"$WORK/json.err") ||
	{ cat "$WORK/json.err" >&2; fail "the worked example failed with traffic"; }
"$PYTHON" - "$WORK/json.out" <<'PY' || fail "packets counted wrongly (see above)"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
acts = {r["pref"]: r["packets"] for r in rows if r.get("cookie") is not None and "pref" in r}
print("packets by pref:", acts)
sys.exit(0 if acts == {10: 1, 20: 1} else 1)
PY
