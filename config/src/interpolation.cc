// TODO: implemented by the interpolation work.
