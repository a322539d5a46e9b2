"""The methods of the paper, each a small piece on the shared autoencoder and loop."""
