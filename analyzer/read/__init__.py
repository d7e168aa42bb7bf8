"""The bounded archive reader and what it reads without parsing C++: layout, exported programs."""
