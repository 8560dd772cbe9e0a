import { enableCompileCache } from 'node:module';
import { settleNextTick } from './settle-next-tick.js';

// The server is one file, dist/bundle/server.js, which `npm run build` joins from server-main.js
// and every module it imports (scripts/bundle.mjs): loading some 1,600 modules one by one cost a
// third of a start. Node keeps its compiled code in the compile cache (NODE_COMPILE_CACHE, else a
// folder in the temporary directory; NODE_DISABLE_COMPILE_CACHE=1 turns it off), on before the
// bundle loads: a restart compiles none of it again. Together: 0.57 s of CPU to listening -> 0.37.
enableCompileCache();
await settleNextTick();
// A specifier tsc does not resolve: the bundle exists only in dist/.
const server = './bundle/server.js';
await import(server);
