// The Files and Batches endpoints: the route table (http/routes.cpp) calls one function per
// route; each is jobs/files.h or jobs/batches.h over the server's job store, its RequestError
// answered as an ApiError. They throw ApiError.
#pragma once
#include "http/call.h"

namespace exspec::http {

Response upload_file(const Call& c);
Response list_files(const Call& c);
Response get_file(const Call& c);  // c.params: {id}
Response file_content(const Call& c);
Response delete_file(const Call& c);

Response create_batch(const Call& c);
Response list_batches(const Call& c);  // the query's limit and after
Response get_batch(const Call& c);     // c.params: {id}
Response cancel_batch(const Call& c);

}  // namespace exspec::http
