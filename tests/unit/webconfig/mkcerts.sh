#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Test fixtures for tests/unit/test_webconfig.c, written into DIR:
#   ca.crt                        a CA
#   server.crt server.key         signed by ca (CN/SAN localhost, serverAuth)
#   client.crt client.key         signed by ca (clientAuth)
#   other-ca.crt                  another CA
#   other-client.crt other-client.key  signed by other-ca (clientAuth)
#   wrong.key                     a key matching no certificate
#   garbage.pem                   not PEM at all
# EC P-256 keys: generated in milliseconds. Needs openssl(1).
set -eu
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
command -v openssl >/dev/null || { echo "$0: openssl(1) not found" >&2; exit 1; }
dir=$1
mkdir -p "$dir"
cd "$dir"

key() {
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null
}

# ca NAME CN
ca() {
	key "$1.key"
	openssl req -new -x509 -key "$1.key" -out "$1.crt" -days 3650 -subj "/CN=$2" \
		-addext "basicConstraints=critical,CA:TRUE" \
		-addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
}

# leaf NAME CN CA EKU SERIAL
leaf() {
	key "$1.key"
	openssl req -new -key "$1.key" -out "$1.csr" -subj "/CN=$2" 2>/dev/null
	printf '%s\n' "basicConstraints=critical,CA:FALSE" \
		"keyUsage=critical,digitalSignature" \
		"extendedKeyUsage=$4" \
		"subjectAltName=DNS:$2" >"$1.ext"
	openssl x509 -req -in "$1.csr" -CA "$3.crt" -CAkey "$3.key" -set_serial "$5" \
		-days 3650 -extfile "$1.ext" -out "$1.crt" 2>/dev/null
	rm -f "$1.csr" "$1.ext"
}

ca ca "tcexporter test CA"
ca other-ca "tcexporter other CA"
leaf server localhost ca serverAuth 2
leaf client scraper ca clientAuth 3
leaf other-client intruder other-ca clientAuth 4
key wrong.key
printf 'this is not PEM\n' >garbage.pem
