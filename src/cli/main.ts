#!/usr/bin/env node
import { enableCompileCache } from 'node:module';

// As for the server (src/main.ts): each run of the CLI compiles its modules from Node's compile
// cache once it holds them.
enableCompileCache();
await import('./cli-main.js');
