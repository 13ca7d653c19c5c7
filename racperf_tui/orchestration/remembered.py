"""What a run on this machine takes from, and leaves in, the data dir's settings: ORION's
ORACLE_HOME and oratcptest's jar and java. One place for `racperf run` and the New run form
(the ORION form says oracle_home is remembered: a launch from the UI must remember it too).

Only for a run on this machine: what is remembered is this machine's paths.
"""

from __future__ import annotations

import os
from typing import Any

from racperf_tui.core import settings
from racperf_tui.tools.orion.oracle_home import SETTING_ORACLE_HOME, remember_oracle_home

__all__ = ["remember_for_run", "remembered_oratcptest_paths", "orion_home"]


def remembered_oratcptest_paths(config: dict[str, Any], data_dir: Any) -> None:
    """The jar and java remembered in THIS data dir (the UI keeps them there) unless given
    with --set, put in the run's config: what ran is recorded with the run."""
    for key, setting in (("jar_path", "oratcptest.jar_path"), ("java", "oratcptest.java")):
        if not config.get(key):
            value = settings.get(setting, None, data_dir=data_dir)
            if value:
                config[key] = value


def orion_home(config: dict[str, Any], data_dir: Any) -> None:
    """ORION's ORACLE_HOME: one given is remembered in THIS data dir (when it holds
    bin/orion); one remembered there is used when none is given (the tool's own search then
    covers $ORACLE_HOME, /etc/oratab and the grid home)."""
    if config.get("oracle_home"):
        home = os.path.abspath(os.path.expanduser(str(config["oracle_home"])))
        if os.access(os.path.join(home, "bin", "orion"), os.X_OK):
            remember_oracle_home(home, data_dir)
    elif not config.get("orion"):
        remembered = settings.get(SETTING_ORACLE_HOME, None, data_dir=data_dir)
        if remembered:
            config["oracle_home"] = remembered


def remember_for_run(tool: str, config: dict[str, Any], data_dir: Any) -> None:
    """Both of the above for the tool they concern (config changed in place). ValueError: a
    corrupt settings file, named."""
    if tool == "oratcptest":
        remembered_oratcptest_paths(config, data_dir)
    elif tool == "orion":
        orion_home(config, data_dir)
