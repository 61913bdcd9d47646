"""A bot plug-in package of the tests' own: tests/plugins on sys.path installs it (its dist-info beside it
declares its entry points in the group `cardtable.bots`), the fixture `bot_plugins` of tests/conftest.py puts it
there. Besides a good level it has one of each way a plug-in can fail."""
