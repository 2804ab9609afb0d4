// TODO: implemented by the override_parser work.
