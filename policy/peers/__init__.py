"""Other scheduling libraries as peers, converted to and from our model."""
