"""sadie: a terminal companion grounded in your own memory."""

__version__ = "0.1.0"
