// Boost.URL's compiled part, built here: Debian's libboost1.81-dev ships its headers, and the
// library itself only in libboost-url1.81-dev; one translation unit with src.hpp takes its place.
#include <boost/url/src.hpp>
