#!/usr/bin/env node
import { enableCompileCache } from 'node:module';

// As for the server (src/main.ts): on before the CLI's modules load, so a second run reads them
// compiled from the cache.
enableCompileCache();
await import('./cli-main.js');
