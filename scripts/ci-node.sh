# Sourced by .ci/run: puts the Node.js line the image and the systemd unit run (NODE_LINE, an LTS
# line that receives security fixes) first on PATH, so CI installs, builds and tests on it whatever
# node the machine has. The binary comes from the npm registry (the `node` package carries the
# official builds), installed into a cache outside the repository. See docs/operations.md
# "Supported Node.js" and docs/upgrading.md for moving to the next line.
NODE_LINE=${NODE_LINE:-24}
ci_node_prefix=${CI_NODE_CACHE:-/tmp/intake-sync-node$NODE_LINE}
if [[ ! -x "$ci_node_prefix/node_modules/node/bin/node" ]] || [[ $("$ci_node_prefix/node_modules/node/bin/node" -p 'process.versions.node.split(".")[0]' 2>/dev/null) != "$NODE_LINE" ]]; then
  echo "installing Node.js $NODE_LINE from the npm registry into $ci_node_prefix"
  rm -rf "$ci_node_prefix"
  npm install --prefix "$ci_node_prefix" --no-audit --no-fund --no-save "node@$NODE_LINE" >/dev/null 2>&1 \
    || echo "could not install Node.js $NODE_LINE: CI runs on $(node --version) instead"
fi
if [[ -x "$ci_node_prefix/node_modules/node/bin/node" ]]; then
  export PATH="$ci_node_prefix/node_modules/node/bin:$PATH"
fi
echo "node $(node --version) (npm $(npm --version))"
