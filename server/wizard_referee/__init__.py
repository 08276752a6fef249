"""Wizard Arena referee: the gRPC server, tournaments, results store and ratings."""
