import { enableCompileCache } from 'node:module';

// Node keeps the code it compiled in its compile cache (NODE_COMPILE_CACHE, else a folder in the
// temporary directory; NODE_DISABLE_COMPILE_CACHE=1 turns it off), so a restart compiles none of
// the server's modules again. It applies only to modules loaded after it is on: the server is
// imported below, not above.
enableCompileCache();
await import('./server-main.js');
