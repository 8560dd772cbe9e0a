// Test-only, loaded with `node --import`: writes the URL of every module the process loaded, ESM
// and CommonJS alike (module.registerHooks sees both), to PETSTORE_TEST_LOADED_MODULES at exit.
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
if (list) process.on('exit', () => writeFileSync(list, [...loaded].join('\n')));
