// TODO: implemented by the emit work.
