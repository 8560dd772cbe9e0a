// Test-only, loaded with `node --import`: writes the URL of every module the process loaded, ESM
// and CommonJS alike (module.registerHooks sees both), to PETSTORE_TEST_LOADED_MODULES at exit,
// with `node:internal/deps/undici` when Node's bundled undici was loaded (no hook sees a builtin's
// internals; process.moduleLoadList names them).
import { writeFileSync } from 'node:fs';
import { registerHooks } from 'node:module';
import process from 'node:process';

const loaded = new Set();
registerHooks({
  load(url, context, nextLoad) {
    loaded.add(url);
    return nextLoad(url, context);
  },
});
const list = process.env.PETSTORE_TEST_LOADED_MODULES;
const UNDICI = 'NativeModule internal/deps/undici/undici';
if (list) {
  process.on('exit', () => {
    // Node's own list of what it loaded, builtins' internals included (not in its typings).
    const builtins = /** @type {{ moduleLoadList: string[] }} */ (/** @type {unknown} */ (process));
    if (builtins.moduleLoadList.includes(UNDICI)) loaded.add('node:internal/deps/undici');
    writeFileSync(list, [...loaded].join('\n'));
  });
}
