// TODO: implemented by the shim work.
