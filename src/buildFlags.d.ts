/**
 * `true` in the bundles users get (scripts/build.mjs defines it); undeclared in tsc output and the test build.
 * Test hooks are written `if (typeof AVH_PRODUCTION_BUILD === 'undefined') …` so esbuild drops them from dist/.
 */
declare const AVH_PRODUCTION_BUILD: true | undefined;
