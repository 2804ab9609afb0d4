// TODO: implemented by the yaml_loader work.
