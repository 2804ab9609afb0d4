// TODO: implemented by the render work.
