'use strict';
// Loads the prebuilt addon for this platform. The package ships the
// linux-x64-gnu build; other platforms build it with `make -C bindings-node build`.
const { platform, arch } = process;
const triple = `${platform}-${arch}${platform === 'linux' ? '-gnu' : ''}`;
try {
  module.exports = require(`./retrycore.${triple}.node`);
} catch (e) {
  const err = new Error(
    `retrycore: no native build for ${triple} in this package (it ships linux-x64-gnu); ` +
      `build one from source with \`make -C bindings-node build\`, or use retrycore-wasm`,
    { cause: e },
  );
  err.code = 'ERR_RETRYCORE_NO_BINARY';
  throw err;
}
