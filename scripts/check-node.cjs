#!/usr/bin/env node
// The package's `preinstall` step: refuses a Node older than the one the service is built for and
// says how to get that one. npm 11 runs a project's own preinstall only after the dependencies are
// in place, so .npmrc's engine-strict is what stops it first (npm's EBADENGINE error names the
// version); this names the way to it. CommonJS with ES5 syntax on purpose, so any old Node can run
// it and print the message instead of failing in a dependency's native build.
/* global module, require, process */
'use strict';

var REQUIRED_MAJOR = 24;
// The version CI and the container image use; scripts/node-runtime.sh fetches it.
var RECOMMENDED = '24.21.0';

/**
 * The message refusing `version` (as process.version gives it, e.g. "v20.19.0"), or null when
 * that version is new enough.
 */
function check(version) {
  var match = /^v?(\d+)\./.exec(String(version));
  var major = match === null ? NaN : Number(match[1]);
  if (major >= REQUIRED_MAJOR) return null;
  return (
    'petstore needs Node ' +
    REQUIRED_MAJOR +
    ' or newer; this is Node ' +
    version +
    '.\n' +
    'Get Node ' +
    RECOMMENDED +
    ' (linux-x64) without touching the system one, then install again:\n' +
    '  PATH="$(scripts/node-runtime.sh ' +
    RECOMMENDED +
    '):$PATH" npm ci\n' +
    'or install Node ' +
    REQUIRED_MAJOR +
    ' from https://nodejs.org/ or your version manager.'
  );
}

module.exports = { check: check, REQUIRED_MAJOR: REQUIRED_MAJOR, RECOMMENDED: RECOMMENDED };

if (require.main === module) {
  var message = check(process.version);
  if (message !== null) {
    process.stderr.write('\n' + message + '\n\n');
    process.exit(1);
  }
}
