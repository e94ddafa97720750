"""Files and pictures attached to a message: the composer's chips, what a sent message shows, citations, the Documents list."""
