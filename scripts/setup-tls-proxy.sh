#!/usr/bin/env bash
# The connection tests (test/foundation/temporal-tls.test.ts) put a real TLS endpoint in front of the
# dev server: Debian's nginx (nginx-light) terminating TLS, requiring a client certificate, and
# passing gRPC on with grpc_pass. nginx, not stunnel: the worker's Rust core (tonic) insists on
# HTTP/2 being negotiated by ALPN, which stunnel 5.68 cannot do. Installs it when missing; needs root
# and Debian's package archive. RIG_NGINX can point at another nginx binary instead.
set -euo pipefail
if [ -n "${RIG_NGINX:-}" ] && [ -x "${RIG_NGINX}" ]; then exit 0; fi
if command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ]; then exit 0; fi
source "$(dirname "$0")/debian-package.sh"
install_debian_package nginx-light "for the TLS connection tests" "nginx is missing: install Debian's nginx-light package (or set RIG_NGINX to an nginx binary built with http_v2 and grpc)"
