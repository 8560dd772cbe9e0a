#!/usr/bin/env node
import { enableCompileCache } from 'node:module';

// As for the server (src/main.ts): one file, dist/bundle/cli.js, compiled from Node's compile
// cache once it holds it.
enableCompileCache();
// A specifier tsc does not resolve: the bundle exists only in dist/.
const cli = '../bundle/cli.js';
await import(cli);
