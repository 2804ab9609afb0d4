# A Hydra plugin as an app's environment may have one: options of
# hydra/launcher and hydra/sweeper that trialshim does not know. Hydra imports
# every module of the hydra_plugins namespace package on its path.
from hydra.core.config_store import ConfigStore

cs = ConfigStore.instance()
cs.store(group="hydra/launcher", name="elsewhere", provider="trialshim_test",
         node={"_target_": "hydra._internal.core_plugins.basic_launcher.BasicLauncher"})
cs.store(group="hydra/sweeper", name="elsewhere", provider="trialshim_test",
         node={"_target_": "hydra._internal.core_plugins.basic_sweeper.BasicSweeper",
               "max_batch_size": None, "params": None})
