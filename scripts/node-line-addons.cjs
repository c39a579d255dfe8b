// Preloaded (`node --require`) when the tests run on a Node line other than the one node_modules was
// installed with: a native addon is built for one line's ABI, and loading node_modules' build on another
// line fails. `node scripts/node-lines.mjs addons MAJOR` builds each addon the tests load (better-sqlite3)
// for that line into a folder of its own, and this sends the loader there instead: node_modules itself is
// never rebuilt, so the default line keeps its own build and a second install is not needed.
//
// SERVICE_PAY_ADDONS is that folder: `<addons>/<package>/<file>.node` replaces
// `node_modules/<package>/build/Release/<file>.node`. Anything not built there loads as usual.
'use strict';
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const addons = process.env.SERVICE_PAY_ADDONS;
if (addons) {
  const dlopen = process.dlopen;
  const built = /[\\/]node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)[\\/]build[\\/]Release[\\/]([^\\/]+\.node)$/;
  process.dlopen = function lineAddon(module, filename, ...rest) {
    const match = built.exec(filename);
    const replacement = match === null ? undefined : join(addons, match[1], match[2]);
    return dlopen.call(
      this,
      module,
      replacement !== undefined && existsSync(replacement) ? replacement : filename,
      ...rest,
    );
  };
}
