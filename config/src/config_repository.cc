// TODO: implemented by the config_repository work.
