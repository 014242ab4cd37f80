// A raw socket to the server under test, for the tests that speak HTTP by hand (support.cpp's
// client, the fuzz test). Apart from support.h so that only they pull in Asio.
#pragma once
#include <boost/asio.hpp>

namespace exspec::httptest {

// A blocking connection to 127.0.0.1:port whose reads and writes give up after timeout_s, so a
// test never hangs on a server that stopped answering.
boost::asio::ip::tcp::socket connect_loopback(boost::asio::io_context& ioc, int port, int timeout_s);

}  // namespace exspec::httptest
