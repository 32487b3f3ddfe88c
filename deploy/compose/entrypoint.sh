#!/bin/sh
# Compose entrypoint: entrypoint.sh validator|miner P2P_PORT API_PORT.
# All services share the validator's network namespace, so the node APIs
# listen on 127.0.0.1 (no token needed there) and miners reach the
# validator there; the validator's p2p port also listens on the container's
# address, which compose publishes. The validator publishes a network file
# naming itself in $SHARED; miners wait for it and join with pog init
# --network.
set -eu
role=$1 p2p=$2 api=$3
SHARED=${SHARED:-/shared}
host=127.0.0.1
if [ "$role" = validator ]; then host=0.0.0.0; fi
export POG_NODE_LISTEN="/ip4/$host/tcp/$p2p,/ip4/$host/udp/$p2p/quic-v1"
export POG_NODE_API="127.0.0.1:$api"

if [ "$role" = validator ]; then
  if [ ! -e "$POG_HOME/node.key" ]; then
    pog init --profile local
  fi
  id=$(pog id)
  stake="[[validator]]
id = \"$id\"
stake = 1000.0"
  printf '%s\n' "$stake" > "$POG_HOME/genesis.toml"
  export POG_NETWORK_VALIDATORS="$id" POG_NETWORK_TRUST_ANY_VALIDATOR=false POG_NETWORK_GENESIS=genesis.toml
  tmp="$SHARED/.network.toml.$$"
  printf 'name = "compose"\nprofile = "local"\nbootstrap = ["/ip4/127.0.0.1/tcp/%s/p2p/%s"]\n\n%s\n' "$p2p" "$id" "$stake" > "$tmp"
  mv "$tmp" "$SHARED/network.toml"
else
  while [ ! -e "$SHARED/network.toml" ]; do sleep 1; done
  if [ ! -e "$POG_HOME/node.key" ]; then
    pog init --network "$SHARED/network.toml"
  fi
fi
exec pog run --role "$role"
