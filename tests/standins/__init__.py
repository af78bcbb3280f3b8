"""The stand-ins (devstack/standins/) answer as the products they stand for, and the fault layer in front of them."""
