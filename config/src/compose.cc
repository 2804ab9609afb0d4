// TODO: implemented by the compose work.
