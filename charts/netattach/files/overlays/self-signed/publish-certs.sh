#!/bin/bash
# Certificate steps of the self-signed overlay. Runs in registry.k8s.io/kubectl (bash, coreutils,
# awk), with the netattach-certs ServiceAccount; `netattach certs` runs between the two steps.
#   publish-certs.sh fetch-ca DIR  copy the CA kept in Secret netattach-ca (if any) into DIR, so
#                                  that `netattach certs --out DIR` signs with it
#   publish-certs.sh publish DIR   store DIR's CA and serving certificate in the Secrets and the CA
#                                  in the caBundle of every netattach webhook
set -euo pipefail

NS=${NAMESPACE:-netattach-system}
CA_SECRET=netattach-ca
TLS_SECRET=netattach-tls
CONFIG=netattach
MANAGER=netattach-certs

secret_field() { # secret key -> base64 value, empty when the Secret or the key is missing
  kubectl -n "$NS" get secret "$1" --ignore-not-found -o "jsonpath={.data.${2//./\\.}}"
}

fetch_ca() {
  local dir=$1 crt key
  crt=$(secret_field "$CA_SECRET" ca.crt)
  key=$(secret_field "$CA_SECRET" ca.key)
  if [[ -z $crt || -z $key ]]; then
    echo "no CA in secret/$CA_SECRET yet: a new one will be created"
    return 0
  fi
  (umask 077 && base64 -d <<<"$key" >"$dir/ca.key")
  base64 -d <<<"$crt" >"$dir/ca.crt"
  echo "signing with the CA kept in secret/$CA_SECRET"
}

apply_secret() { # name type key=file...
  local name=$1 type=$2 kv
  shift 2
  local from=()
  for kv in "$@"; do from+=("--from-file=$kv"); done
  kubectl -n "$NS" create secret generic "$name" --type="$type" "${from[@]}" --dry-run=client -o yaml |
    kubectl apply --server-side --field-manager="$MANAGER" --force-conflicts -f -
}

webhook_names() { # kind -> one webhook name a line; waits for the configuration to exist
  local kind=$1 names="" attempt
  for attempt in $(seq 1 60); do
    names=$(kubectl get "$kind" "$CONFIG" --ignore-not-found -o 'jsonpath={range .webhooks[*]}{.name}{"\n"}{end}')
    [[ -n $names ]] && break
    sleep 2
  done
  [[ -n $names ]] || { echo "$kind/$CONFIG not found after $attempt attempts" >&2; return 1; }
  printf '%s\n' "$names"
}

# The new CA, followed by the first certificate of the bundle configured now when that is another
# CA: during a CA change the apiserver then trusts both the serving certificate still mounted in
# the pods and the new one, until the kubelet has updated the Secret's files.
ca_bundle() { # dir
  local dir=$1 current old
  current=$(kubectl get validatingwebhookconfiguration "$CONFIG" --ignore-not-found -o 'jsonpath={.webhooks[0].clientConfig.caBundle}')
  old=""
  if [[ -n $current ]]; then
    old=$(base64 -d <<<"$current" | awk '/-----BEGIN CERTIFICATE-----/{n++} n==1{print} /-----END CERTIFICATE-----/{if(n==1)exit}')
  fi
  if [[ -n $old && $(tr -d '\n' <"$dir/ca.crt") != *"$(tr -d '\n' <<<"$old")"* ]]; then
    { cat "$dir/ca.crt"; printf '%s\n' "$old"; } | base64 -w0
  else
    base64 -w0 <"$dir/ca.crt"
  fi
}

patch_ca_bundle() { # kind bundle
  local kind=$1 bundle=$2 name i=0 ops=()
  while read -r name; do
    # `test` guards the index against a concurrent edit that reorders the list.
    ops+=("{\"op\":\"test\",\"path\":\"/webhooks/$i/name\",\"value\":\"$name\"}")
    ops+=("{\"op\":\"add\",\"path\":\"/webhooks/$i/clientConfig/caBundle\",\"value\":\"$bundle\"}")
    i=$((i + 1))
  done < <(webhook_names "$kind")
  local IFS=,
  kubectl patch "$kind" "$CONFIG" --type=json -p "[${ops[*]}]"
}

publish() {
  local dir=$1 bundle
  # The CA first, so that a run interrupted later still reuses it next time.
  apply_secret "$CA_SECRET" Opaque "ca.crt=$dir/ca.crt" "ca.key=$dir/ca.key"
  bundle=$(ca_bundle "$dir")
  patch_ca_bundle mutatingwebhookconfiguration "$bundle"
  patch_ca_bundle validatingwebhookconfiguration "$bundle"
  # netattach reloads the files when the kubelet updates the mounted Secret.
  apply_secret "$TLS_SECRET" kubernetes.io/tls "tls.crt=$dir/tls.crt" "tls.key=$dir/tls.key" "ca.crt=$dir/ca.crt"
}

case "${1:-}" in
  fetch-ca) fetch_ca "${2:?usage: publish-certs.sh fetch-ca DIR}" ;;
  publish) publish "${2:?usage: publish-certs.sh publish DIR}" ;;
  *) echo "usage: publish-certs.sh fetch-ca|publish DIR" >&2; exit 2 ;;
esac
