"""racperf's tests: a package, so every test module and helper has one import name
(``tests.test_x``, ``tests.helpers.loopdev``) however pytest or a script is started."""
