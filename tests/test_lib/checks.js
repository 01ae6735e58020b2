// The checks of the Node tests (tests/libretranslate, tests/web), printed as the Python ones are:
// "ok   NAME" or "FAIL NAME: DETAIL", then a count; `run` exits 1 if one failed or `main` threw.
'use strict';

let passed = 0;
let failed = 0;

function expect(name, ok, detail) {
  if (ok) {
    passed++;
    console.log(`ok   ${name}`);
  } else {
    failed++;
    console.log(`FAIL ${name}: ${detail}`);
  }
  return ok;
}

function run(main) {
  main().then(() => {
    console.log(`${passed} passed, ${failed} failed`);
    process.exit(failed === 0 ? 0 : 1);
  }, (error) => {
    console.log(`FAIL ${error.stack || error}`);
    process.exit(1);
  });
}

module.exports = { expect, run };
